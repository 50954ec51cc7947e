"""Invariant 2 as a property: whatever mix of calls the model makes, every tool_use gets exactly one
tool_result, in order, before the next model call — and the history stays sendable after the run."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from react_agent_mini.abort import AbortSignal
from react_agent_mini.events import Terminal
from react_agent_mini.loop import QueryDeps, QueryParams, query
from react_agent_mini.messages import Message, ToolUseBlock, unanswered_tool_uses, user_text
from react_agent_mini.permissions.policy import Allow, Decision, Deny
from react_agent_mini.tools.base import Tool, ToolContext, ToolRegistry
from react_agent_mini.tools.builtin.echo import EchoTool

from ..scripted import ScriptedModel, reply
from ..test_loop import BoomTool, TouchTool, WaitTool

KINDS = ["echo", "wait", "unknown", "invalid", "bad_json", "boom", "touch_ok", "touch_denied", "touch_refused"]


def make_call(kind: str, n: int) -> ToolUseBlock:
    id_ = f"c{n}"
    return {
        "echo": ToolUseBlock(id_, "Echo", {"message": f"m{n}"}),
        "wait": ToolUseBlock(id_, "Wait", {"seconds": 0.001}),
        "unknown": ToolUseBlock(id_, "Nope", {}),
        "invalid": ToolUseBlock(id_, "Echo", {"message": 5}),
        "bad_json": ToolUseBlock(id_, "Echo", {}, input_error="arguments were invalid JSON"),
        "boom": ToolUseBlock(id_, "Boom", {}),
        "touch_ok": ToolUseBlock(id_, "Touch", {"file_path": "ok.txt"}),
        "touch_denied": ToolUseBlock(id_, "Touch", {"file_path": "denied.txt"}),
        "touch_refused": ToolUseBlock(id_, "Touch", {"file_path": "refused.txt"}),
    }[kind]


async def policy(tool: Tool, args: Mapping[str, Any], info: object = None) -> Decision:
    path = str(args.get("file_path", ""))
    if path == "denied.txt":
        return Deny("denied by rule")
    if path == "refused.txt":
        return Deny("user refused", end_turn=True)
    return Allow()


scripts = st.lists(st.lists(st.sampled_from(KINDS), min_size=1, max_size=5), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(scripts, st.booleans())
def test_every_call_is_answered_once_in_order(turns: list[list[str]], abort_early: bool) -> None:
    counter = iter(range(10_000))
    steps = [reply(*(make_call(k, next(counter)) for k in kinds)) for kinds in turns] + [reply("done")]
    model = ScriptedModel(steps)

    async def run() -> list[Message]:
        signal = AbortSignal()
        if abort_early:
            asyncio.get_running_loop().call_later(0.002, signal.abort)
        with tempfile.TemporaryDirectory() as tmp:
            params = QueryParams(
                messages=[user_text("go")],
                tools=ToolRegistry([EchoTool(), WaitTool(), BoomTool(), TouchTool()]),
                context=ToolContext(cwd=Path(tmp)),
                signal=signal,
            )
            history: list[Message] = [user_text("go")]
            events = [e async for e in query(params, QueryDeps(call_model=model, can_use_tool=policy))]
        assert isinstance(events[-1], Terminal)
        for e in events:
            message = getattr(e, "message", None)
            if isinstance(message, Message):
                history.append(message)
        return history

    history = asyncio.run(run())
    assert unanswered_tool_uses(history) == []
    for request in [*model.requests, None]:
        messages = history if request is None else request.messages
        for i, message in enumerate(messages):
            if message.tool_uses:
                answer = messages[i + 1]
                assert [r.tool_use_id for r in answer.tool_results] == [u.id for u in message.tool_uses]
                assert answer.content[: len(message.tool_uses)] == tuple(answer.tool_results)
